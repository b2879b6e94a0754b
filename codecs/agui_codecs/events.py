"""The canonical event model: AG-UI 1.0 events from ``ag_ui.core`` (ag-ui-protocol 1.0).

There are no home-made event classes: every decoder yields ``ag_ui.core`` events and every
encoder consumes them. This module re-exports the union type and adds the two conversions the
codecs need on the hot path:

* :func:`event_to_wire` gives the wire dict (camelCase keys, optional fields omitted, never
  ``null``), the form ``@ag-ui/client`` 1.0 validates (``spec/1.0/schema.json``);
* :func:`wire_view` reads an event *as* its wire dict without building it: a read-only
  mapping whose keys and values are those of :func:`event_to_wire`, resolved on access (for
  encoders that read a few keys of each event, :mod:`agui_codecs.encoders.ai_sdk`);
* :func:`event_json` gives ``orjson.dumps(event_to_wire(event))`` without building the copy;
* :func:`parse_event` validates a wire dict back into its ``ag_ui.core`` class;
* :func:`new_event` builds an event from its fields as the class's constructor does, a frame
  shorter (the hot deltas of :class:`~agui_codecs.builder.RunBuilder`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, TypeVar

import orjson
from ag_ui.core import (
    Event,
    EventType,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    TokenUsage,
    ToolCallArgsEvent,
)
from pydantic import BaseModel, TypeAdapter

__all__ = [
    "Event",
    "EventType",
    "TokenUsage",
    "delta_factory",
    "event_json",
    "event_to_wire",
    "new_event",
    "parse_event",
    "wire_view",
]

_EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

_E = TypeVar("_E", bound=BaseModel)


def new_event(cls: type[_E], fields: dict[str, Any]) -> _E:
    """``cls(**fields)``: the same validation, by the model's own core validator, without the
    Python frame of ``BaseModel.__init__`` (about 40% of a delta event's construction).
    ``tests/codecs/test_events.py`` checks it equals the constructor (hypothesis).

    Raises:
        pydantic.ValidationError: as ``cls(**fields)``.
    """
    return cls.__pydantic_validator__.validate_python(fields)  # type: ignore[no-any-return]


def delta_factory(cls: type[_E]) -> Callable[[dict[str, Any]], _E]:
    """:func:`new_event` of ``cls`` as one callable: the model's core validator itself, bound
    once (``factory(fields)`` is ``cls(**fields)``, without even :func:`new_event`'s frame),
    for the builder's per-delta events.

    Raises (from the factory):
        pydantic.ValidationError: as ``cls(**fields)``.
    """
    return cls.__pydantic_validator__.validate_python


def event_to_wire(event: Event) -> dict[str, Any]:
    """Return the AG-UI wire form of ``event``: a JSON-ready dict with camelCase keys.

    Optional fields without a value are omitted (``ag_ui.core``'s base model does this, because
    TypeScript clients reject ``null`` for optional fields).

    The three delta events (most of any stream) take a fast path that builds the same dict
    directly when no optional field is set; every other event is its JSON text
    (:func:`event_json`'s fast path) read back with ``orjson.loads``, a deep copy made at C
    speed that equals the JSON-mode dump (orjson writes plain values, nested ``ag_ui`` models
    and the enums, tuples and UUIDs inside ``Any`` fields as that dump gives them); the rest
    (extra fields, a top-level non-finite float, values orjson refuses: subclasses of builtins,
    datetimes, dataclasses, non-string keys, lone surrogates, integers beyond 64 bits) go
    through ``model_dump``. ``tests/codecs/test_events.py`` checks both paths against
    ``model_dump`` for arbitrary events of every type (hypothesis).
    """
    fast = _DELTA_FIELDS.get(type(event))
    if fast is not None and not _has_optional(event):
        kind, key, attr = fast
        return {"type": kind, key: getattr(event, attr), "delta": event.delta}  # type: ignore[union-attr]
    shared = _shared_wire(event)
    if shared is not None:
        try:  # the JSON text of the event read back: a deep copy made at C speed
            return orjson.loads(orjson.dumps(shared, default=_nested, option=_SHARED_OPTIONS))  # type: ignore[no-any-return]
        except orjson.JSONEncodeError:
            pass
    return event.model_dump(mode="json", by_alias=True)


_SHARED_OPTIONS: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)
"""What :func:`event_json`'s fast path leaves to the fallback: subclasses of ``str``, ``int``,
``dict`` and ``list``, datetimes and dataclasses (whose JSON-mode dump may differ from orjson's
own rendering) raise instead of being serialized."""


def event_json(event: Event) -> bytes:
    """``orjson.dumps(event_to_wire(event))``, byte for byte: the compact UTF-8 JSON of the
    event's wire form (keys in ``model_dump`` order, optional fields without a value omitted).

    The three delta events without optional fields are the dict of :func:`event_to_wire`'s
    fast path, serialized. For the others the fast path serializes the event's top-level
    fields as they are, sharing their containers (nothing is copied, since nothing is kept):
    orjson renders plain JSON values as
    ``model_dump(mode="json")`` would (non-finite floats as ``null`` either way); anything it
    would render otherwise or not at all (nested models, subclasses of builtins, datetimes,
    dataclasses, non-string keys, lone surrogates, integers beyond 64 bits) makes it raise, and
    the event goes through ``model_dump``. ``tests/codecs/test_events.py`` checks it against
    ``orjson.dumps(model_dump(...))`` for every event type (hypothesis).

    Raises:
        orjson.JSONEncodeError: a value JSON cannot hold (as ``orjson.dumps`` of the wire dict).
    """
    fast = _DELTA_FIELDS.get(type(event))
    if fast is not None and not _has_optional(event):  # the dict of event_to_wire's fast path
        kind, key, attr = fast
        try:
            return orjson.dumps(
                {"type": kind, key: getattr(event, attr), "delta": event.delta},  # type: ignore[union-attr]
                option=_SHARED_OPTIONS,
            )
        except orjson.JSONEncodeError:
            pass
    wire = _shared_wire(event)
    if wire is not None:
        try:
            return orjson.dumps(wire, default=_nested, option=_SHARED_OPTIONS)
        except orjson.JSONEncodeError:
            pass
    return orjson.dumps(event.model_dump(mode="json", by_alias=True))


def _shared_wire(event: Event) -> dict[str, Any] | None:
    """The wire dict of :func:`event_json`'s fast path (top-level values shared, nested
    models left to :func:`_nested`), or None for the fallback: extra fields, or a top-level
    non-finite float (``model_dump`` gives None for it, which the omission rule then drops)."""
    if event.__pydantic_extra__:
        return None
    cls = type(event)
    spec = _SHARED.get(cls) or _shared_spec(cls)
    if not spec:
        return None
    kind, fields = spec
    values = event.__dict__
    wire: dict[str, Any] = {"type": kind}
    for key, name, omittable in fields:
        value = values[name]
        if value is not None or not omittable:
            if type(value) is float and not math.isfinite(value):
                return None
            wire[key] = value
    return wire


def _nested(value: Any) -> dict[str, Any]:
    """orjson's ``default`` for :func:`event_json`: a nested ``ag_ui`` model (token usage, a
    run outcome, a message) as its fields, omitted by the rule of ``ag_ui``'s base model (its
    ``_omit_fields_without_value``); anything else raises ``TypeError`` (the fallback)."""
    cls = type(value)
    fields = _NESTED.get(cls)
    if fields is None:
        if not (isinstance(value, BaseModel) and hasattr(cls, "_omit_fields_without_value")):
            raise TypeError(cls.__name__)
        fields = _NESTED[cls] = tuple(
            (key, name, omittable) for key, (name, omittable) in _wire_fields(cls).items()
        )
    if value.__pydantic_extra__:
        raise TypeError(cls.__name__)
    values = value.__dict__
    out: dict[str, Any] = {}
    for key, name, omittable in fields:
        item = values[name]
        if item is not None or not omittable:
            if type(item) is float and not math.isfinite(item):
                raise TypeError("non-finite float")  # dumped as None: the fallback's rule
            out[key] = item
    return out


_NESTED: dict[type, tuple[tuple[str, str, bool], ...]] = {}


_SHARED: dict[type, tuple[str, tuple[tuple[str, str, bool], ...]] | tuple[()]] = {}
"""Event class -> (its wire type, (wire key, attribute, omittable) of its other fields), or
``()`` for a class whose ``type`` is not its first field (always the fallback)."""


def _shared_spec(cls: type[BaseModel]) -> tuple[str, tuple[tuple[str, str, bool], ...]] | tuple[()]:
    fields = list(_wire_fields(cls).items())
    if not fields or fields[0][1][0] != "type":
        _SHARED[cls] = ()
        return ()
    kind = cls.model_fields["type"].default
    spec = _SHARED[cls] = (
        str(getattr(kind, "value", kind)),
        tuple((key, name, omittable) for key, (name, omittable) in fields[1:]),
    )
    return spec


_DELTA_FIELDS: dict[type, tuple[str, str, str]] = {
    TextMessageContentEvent: ("TEXT_MESSAGE_CONTENT", "messageId", "message_id"),
    ReasoningMessageContentEvent: ("REASONING_MESSAGE_CONTENT", "messageId", "message_id"),
    ToolCallArgsEvent: ("TOOL_CALL_ARGS", "toolCallId", "tool_call_id"),
}
"""The delta events' wire type, id key and id attribute (their type is fixed by the class)."""


def _has_optional(event: Event) -> bool:
    return (
        event.timestamp is not None
        or event.raw_event is not None
        or event.metadata is not None
        or event.subagent_run_id is not None  # type: ignore[union-attr]
        or bool(event.__pydantic_extra__)
    )


_MISSING: Any = object()
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, dict})

_WIRE_FIELDS: dict[type, dict[str, tuple[str, bool]]] = {}
_TYPES: dict[type, str] = {}  # event class -> its wire type (fixed by the class)


def _wire_fields(cls: type[BaseModel]) -> dict[str, tuple[str, bool]]:
    """Wire key -> (attribute, omitted when None), in ``model_dump`` order; the omission rule
    is ``ag_ui``'s ``GeneratedBaseModel``: an optional field whose default is None."""
    fields = _WIRE_FIELDS.get(cls)
    if fields is None:
        fields = _WIRE_FIELDS[cls] = {
            (info.alias or name): (name, not info.is_required() and info.default is None)
            for name, info in cls.model_fields.items()
        }
    return fields


def _plain(value: Any) -> Any:
    """A model or list field's wire value: its JSON text read back (as :func:`event_to_wire`
    does), else the JSON-mode dump of the models in it."""
    try:
        return orjson.loads(orjson.dumps(value, default=_nested, option=_SHARED_OPTIONS))
    except orjson.JSONEncodeError:
        pass
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _WireView(Mapping[str, Any]):
    __slots__ = ("_event", "_fields", "_type")

    def __init__(self, event: Event) -> None:
        self._event = event
        cls = type(event)
        self._fields = _wire_fields(cls)
        kind = _TYPES.get(cls)
        if kind is None:
            kind = _TYPES[cls] = event.type.value
        self._type = kind

    def get(self, key: str, default: Any = None) -> Any:
        spec = self._fields.get(key)
        if spec is None:
            extra = self._event.__pydantic_extra__
            return _plain(extra[key]) if extra is not None and key in extra else default
        name, omittable = spec
        if name == "type":
            return self._type
        value = getattr(self._event, name)
        if value is None:
            return default if omittable else None
        return value if type(value) in _SCALARS else _plain(value)

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _MISSING) is not _MISSING

    def __iter__(self) -> Iterator[str]:
        for key in self._fields:
            if key in self:
                yield key
        yield from self._event.__pydantic_extra__ or ()

    def __len__(self) -> int:
        return sum(1 for _ in self)


def wire_view(event: Event) -> Mapping[str, Any]:
    """``event`` read as its wire form: a read-only mapping equal to ``event_to_wire(event)``
    (same keys, same values; nested models given as their wire dicts), whose values are looked
    up on access instead of serializing the whole model. ``tests/codecs/test_events.py``
    checks it against ``event_to_wire`` for every event type (hypothesis)."""
    return _WireView(event)


def parse_event(data: dict[str, Any]) -> Event:
    """Validate an AG-UI wire dict into its ``ag_ui.core`` event class.

    Raises:
        pydantic.ValidationError: unknown ``type`` or a malformed known field.
    """
    return _EVENT_VALIDATE(data)  # type: ignore[no-any-return]


_EVENT_VALIDATE = _EVENT_ADAPTER.validator.validate_python
"""The union's core validator: what ``TypeAdapter.validate_python`` calls with its defaults,
without its Python frame."""
