"""Hypothesis strategies for AG-UI 1.0 events: every ``ag_ui.core`` event type, with the fields
its model declares (required always, optional sometimes), built from the models' own type
annotations so a new field or type of ``ag-ui-protocol`` is covered without editing this file.

Ids come from a small pool, so generated sequences re-use them (a TOOL_CALL_ARGS finds its
TOOL_CALL_START, a text delta its open message); metadata, CUSTOM names and values draw on the
keys the encoders read (the conventions of ARCHITECTURE.md) besides arbitrary JSON, including
``__proto__`` / ``constructor.prototype`` keys.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from ag_ui.core import Event
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

__all__ = ["EVENT_TYPES", "event_sequences", "events", "json_values"]

EVENT_TYPES: tuple[type[BaseModel], ...] = typing.get_args(typing.get_args(Event)[0])
"""Every class of the ``ag_ui.core.Event`` union."""

IDS = st.sampled_from(["a", "b", "c"])
KEYS = st.sampled_from(
    [
        "a",
        "id",
        "url",
        "title",
        "data",
        "kind",
        "output",
        "sourceType",
        "mediaType",
        "toolCallId",
        "transient",
        "providerMetadata",
        "messageMetadata",
        "__proto__",
        "constructor",
        "prototype",
        "é\n",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**31), 2**31),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=6),
    st.sampled_from(["a", "b", "document", "url", "https://x.example/", "text/plain"]),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(KEYS | st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=8,
)
"""Any JSON value (finite floats, no lone surrogates), keys from the encoders' vocabulary."""

METADATA = st.dictionaries(
    st.sampled_from(
        [
            "finishReason",
            "messageId",
            "incomplete",
            "providerExecuted",
            "dynamic",
            "provider",
            "field",
            "messageMetadata",
            "ui_schema",
            "toolName",
            "isAutomatic",
            "costUsd",
            "x",
        ]
    ),
    st.one_of(st.booleans(), st.sampled_from(["stop", "a", "google", "signature"]), json_values),
    max_size=4,
)
CUSTOM_NAMES = st.sampled_from(
    [
        "source",
        "data-x",
        "file",
        "reasoning-file",
        "custom",
        "message-metadata",
        "tool-output-preliminary",
        "anthropic.content_block",
        "other",
    ]
)
SPECIAL: dict[str, st.SearchStrategy[Any]] = {
    "metadata": METADATA,
    "raw_event": json_values,
    "delta": st.one_of(st.text(max_size=6), st.sampled_from(['{"a":', "1}", "{}", ""])),
    "timestamp": st.integers(0, 2**40),
}


def _strategy(annotation: Any, field: str, depth: int) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _strategy(args[0], field, depth)
    if origin is typing.Union or origin is types.UnionType:
        options = [a for a in args if a is not type(None)]
        return st.one_of([_strategy(a, field, depth) for a in options])
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin is list:
        return st.lists(_strategy(args[0], field, depth), max_size=0 if depth > 2 else 3)
    if origin is dict or annotation is dict:
        return st.dictionaries(KEYS, json_values, max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return models(annotation, depth + 1)
    if annotation is str:
        return IDS if field == "id" or field.endswith("_id") else st.text(max_size=8)
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.integers(0, 2**31)
    if annotation is float:
        return st.floats(0, 1e6, allow_nan=False)
    return json_values  # Any, JSON aliases


def models(cls: type[BaseModel], depth: int = 0) -> st.SearchStrategy[Any]:
    """Instances of ``cls`` (an ``ag_ui.core`` model) with arbitrary field values."""
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in cls.model_fields.items():
        if name == "type" or (name == "input" and depth == 0):
            continue  # the discriminator; RunAgentInput (RUN_STARTED.input) is out of scope
        if name in SPECIAL and (name != "delta" or info.annotation in (str, str | None)):
            strategy = SPECIAL[name]
        elif cls.__name__ == "CustomEvent" and name == "name":
            strategy = CUSTOM_NAMES
        elif pattern := next(
            (m.pattern for m in info.metadata if getattr(m, "pattern", None)), None
        ):
            strategy = st.from_regex(pattern, fullmatch=True).filter(lambda v: len(v) < 12)
        else:
            strategy = _strategy(info.annotation, name, depth)
        (required if info.is_required() else optional)[name] = strategy
    if depth > 3:
        optional = {}
    kwargs = st.fixed_dictionaries(required, optional=optional)
    return kwargs.map(lambda values: _validate(cls, values)).filter(lambda m: m is not None)


def _validate(cls: type[BaseModel], values: dict[str, Any]) -> BaseModel | None:
    """The model, or None for values a constraint of the model refuses (filtered out)."""
    try:
        return cls.model_validate(values)
    except ValidationError:
        return None


def events() -> st.SearchStrategy[Event]:
    """One event of any ``ag_ui.core`` type."""
    return st.one_of([models(cls) for cls in EVENT_TYPES])


def event_sequences(max_size: int = 12) -> st.SearchStrategy[list[Event]]:
    """A list of events of any types (a run's shape is not enforced: encoders must cope)."""
    return st.lists(events(), max_size=max_size)
