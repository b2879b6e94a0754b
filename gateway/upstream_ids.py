"""Ids the upstream sends, checked like client ids (:mod:`gateway.ids`) before anything stores
them (issue 15).

An upstream picks its own message, tool-call and reasoning ids (OpenAI ``chatcmpl-…`` /
``call_…``, Anthropic ``toolu_…``, an AG-UI or AI SDK backend anything at all). The run store
keeps them in columns (a thread's history is keyed by message id), where a NUL cannot be
stored on PostgreSQL and an overlong id does not fit, so such an id would fail the run on one
backend and not on the other. :class:`UpstreamIds` therefore remaps every id that
:func:`gateway.ids.id_problem` refuses to ``up-<32 hex>`` (the first 128 bits of the SHA-256 of
the id's UTF-8 bytes, surrogates escaped): deterministic, so every event naming the same
upstream id names the same safe id, on every replica and store, and two different ids stay
two; the entity (message, tool call, result) is kept whole, only its id changes. Acceptable
ids pass unchanged. The mapping of one run is kept in :attr:`UpstreamIds.remapped`; the mappings
made since the last call are :meth:`UpstreamIds.take_new`, which the pipeline has the run store
keep per thread (``upstream_ids`` table, migration 0006) before the batch naming them goes on,
so the thread's next request sends the provider its own id back
(:meth:`gateway.store.RunStore.upstream_ids`, ``ClientRequest.upstream_ids``,
:func:`agui_codecs.identity.provider_body`). :data:`GATEWAY_ID` finds such ids in a request.

Fields checked, on every event and recursively in the messages of a MESSAGES_SNAPSHOT:
``message_id``, ``tool_call_id``, ``parent_message_id``, ``entity_id``, ``id`` (messages, tool
calls, content parts), the lists ``pending_tool_call_ids`` / ``interrupt_ids`` and the
``messageId`` of an event's ``metadata`` (RUN_STARTED: the AI SDK ``start.messageId``).
"""

from __future__ import annotations

import hashlib
import re
import types
from collections.abc import Iterable
from enum import Enum
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from .ids import id_problem

__all__ = ["GATEWAY_ID", "ID_FIELDS", "UpstreamIds", "gateway_ids_in", "safe_id"]

ID_FIELDS: Final[frozenset[str]] = frozenset(
    {"message_id", "tool_call_id", "parent_message_id", "entity_id", "id"}
)
"""Fields (ag_ui.core snake_case names) holding one id."""

_ID_LIST_FIELDS: Final[frozenset[str]] = frozenset({"pending_tool_call_ids", "interrupt_ids"})


GATEWAY_ID: Final = re.compile(rb"up-[0-9a-f]{32}")
"""What :func:`safe_id` makes, as a bytes pattern (to find them in a request body)."""


def gateway_ids_in(texts: Iterable[bytes]) -> set[str]:
    """Every :func:`safe_id`-shaped id in ``texts`` (JSON bodies; a content string that looks
    like one is found too, and is left alone later: only id-named keys are restored)."""
    found: set[str] = set()
    for text in texts:
        if b"up-" in text:
            found.update(match.decode() for match in GATEWAY_ID.findall(text))
    return found


def safe_id(value: str) -> str:
    """``up-`` + the first 32 hex digits of SHA-256 of ``value`` (an acceptable id)."""
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return f"up-{digest[:32]}"


class UpstreamIds:
    """Per-run stage: :meth:`process` returns the event with every refused id remapped.

    Attributes:
        remapped: upstream id -> the safe id used for it, this run.
    """

    def __init__(self) -> None:
        self.remapped: dict[str, str] = {}
        self._ok: set[str] = set()
        self._new: dict[str, str] = {}

    def take_new(self) -> dict[str, str]:
        """``{safe id: upstream id}`` of the ids remapped since the last call (then cleared)."""
        new, self._new = self._new, {}
        return new

    def fix(self, value: str) -> str:
        """``value`` when it is an acceptable id, else its safe id (remembered)."""
        if value in self._ok:
            return value
        mapped = self.remapped.get(value)
        if mapped is not None:
            return mapped
        if id_problem(value) is None:
            if len(self._ok) < 10_000:
                self._ok.add(value)
            return value
        mapped = self.remapped[value] = safe_id(value)
        self._new[mapped] = value
        return mapped

    def process(self, event: Any) -> Any:
        """``event`` (an ``ag_ui.core`` model), or a copy with its refused ids remapped."""
        return self._model(event) if isinstance(event, BaseModel) else event

    def _model(self, model: BaseModel) -> BaseModel:
        update: dict[str, Any] = {}
        cls = type(model)
        names = _CHECKED.get(cls)
        if names is None:
            names = _CHECKED[cls] = _checked_fields(cls)
        for name in names:
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

    def _metadata(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """``metadata`` with its ``messageId`` (RUN_STARTED: the upstream's message id, e.g.
        an AI SDK backend's ``start.messageId``, the AI SDK encoder's ``start.messageId``)
        remapped."""
        value = metadata.get("messageId")
        if not isinstance(value, str):
            return metadata
        fixed = self.fix(value)
        return metadata if fixed == value else {**metadata, "messageId": fixed}


_SCALARS = (str, int, float, bool, Enum, type(None))


def _scalar_only(annotation: Any) -> bool:
    """True when every value of ``annotation`` is a str, number, bool, enum member or None:
    never an id to fix (unless named like one) and never a model to look into."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _scalar_only(get_args(annotation)[0])
    if origin is Literal:
        return all(isinstance(value, _SCALARS) for value in get_args(annotation))
    if origin is Union or origin is types.UnionType:
        return all(_scalar_only(arg) for arg in get_args(annotation))
    return isinstance(annotation, type) and issubclass(annotation, _SCALARS)


def _checked_fields(cls: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``cls`` :meth:`UpstreamIds._model` reads: all but those whose annotation
    holds only scalars and whose name is no id field (a validated model's such fields can
    match no rule; a delta is read no more on every TEXT_MESSAGE_CONTENT)."""
    keep = ID_FIELDS | _ID_LIST_FIELDS | {"metadata"}
    return tuple(
        name
        for name, info in cls.model_fields.items()
        if name in keep or not _scalar_only(info.annotation)
    )


_CHECKED: dict[type[BaseModel], tuple[str, ...]] = {}
""":func:`_checked_fields` per model class (computed on first use)."""
