"""Parse and validate a request body without holding the event loop for long.

A long conversation posted whole (14 MB, 200k messages) takes seconds to validate in one
``model_validate_json`` call, and pydantic-core keeps the GIL for most of it, so even a thread
leaves the loop stalled: every other stream of the process stops meanwhile. Here a large body
is parsed in steps of :data:`PARSE_STEP` bytes (:func:`gateway.json_steps.loads_in_steps`: the
value of :func:`agui_codecs.jsontext.loads`, orjson with big integers kept whole, yielding to
the loop between steps; one ``loads`` of a 16.5 MB chat body held it ~250 ms), then
its ``messages`` list (top-level, or under ``input`` for ``POST /api/v1/agent/runs``) is
validated in slices of :data:`SLICE` messages, yielding to the loop between slices; the
envelope is validated with an empty list there, and the validated messages are put in its
place (a second pass over them would cost as much as the first). CPU work after validation
(ids, translation) goes through :func:`off_loop`.

The cyclic garbage collector is what made a large AI SDK chat stall the loop (16.5 MB, 200k
messages, ``bench/large_request.py``: one section of ~0.7 s CPU): parsing allocates millions of
containers, which trigger full collections that scan all of them during ``loads``, and again,
growing, every few slices. So the parse and each slice run with the collector paused
(:func:`_uncollected`), and what they allocated is frozen (:func:`gc.freeze`: acyclic JSON and
models, freed by reference counting as usual) until the body is validated, when
:func:`gc.unfreeze` hands it back to the oldest generation. Only the sliced path does this.

Same result as ``model.model_validate_json(body)``: any error on the sliced path (invalid
JSON, an invalid message, an unexpected shape) falls back to ``model_validate_json`` in a
thread, so a refusal carries exactly the usual pydantic error list. Bodies below
:data:`LARGE_BODY` bytes are validated inline, as before (a thread hop costs more than they do).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any, Final, TypeVar

from pydantic import BaseModel, TypeAdapter

from .json_steps import STEP, loads_in_steps

__all__ = ["LARGE_BODY", "LARGE_INPUT", "PARSE_STEP", "SLICE", "off_loop", "validate_body"]

LARGE_BODY: Final = 1 << 20
"""Bytes from which a body is validated in slices (1 MiB)."""
SLICE: Final = 1000
"""Messages validated per step between two yields to the loop."""
PARSE_STEP: Final = STEP
"""Bytes of JSON text parsed per step between two yields (:mod:`gateway.json_steps`)."""
LARGE_INPUT: Final = 2000
"""Messages from which :func:`off_loop` work runs in a thread."""

_M = TypeVar("_M", bound=BaseModel)
_T = TypeVar("_T")


def _messages_path(model: type[BaseModel]) -> tuple[str, ...] | None:
    """Where ``model`` keeps its list of messages: ``("messages",)``, ``("input", "messages")``
    (an envelope around a RunAgentInput), else None."""
    fields = model.model_fields
    if "messages" in fields:
        return ("messages",)
    inner = fields.get("input")
    annotation = inner.annotation if inner is not None else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if "messages" in annotation.model_fields:
            return ("input", "messages")
    return None


@cache
def _adapter(model: type[BaseModel], path: tuple[str, ...]) -> TypeAdapter[Any]:
    owner = model
    for name in path[:-1]:
        annotation = owner.model_fields[name].annotation
        assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
        owner = annotation
    field: Any = owner.model_fields[path[-1]].annotation
    return TypeAdapter(field)


async def validate_body(body: bytes, model: type[_M]) -> _M:
    """``body`` validated as ``model``, yielding to the loop while a large one is validated.

    Raises:
        ValidationError: as ``model.model_validate_json(body)`` raises it.
    """
    path = _messages_path(model) if len(body) >= LARGE_BODY else None
    if path is None:
        return model.model_validate_json(body)
    try:
        return await _sliced(body, model, path)
    except (ValueError, TypeError, KeyError):  # ValidationError and JSONDecodeError included
        return await asyncio.to_thread(model.model_validate_json, body)


@contextmanager
def _uncollected() -> Iterator[None]:
    """Run the block (CPU only, no await: the GIL is held throughout) with the cyclic collector
    paused, then freeze what is tracked so later collections skip it (see the module
    docstring); the caller calls :func:`gc.unfreeze` when done."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


async def _sliced(body: bytes, model: type[_M], path: tuple[str, ...]) -> _M:
    try:
        return await _sliced_frozen(body, model, path)
    finally:
        gc.unfreeze()


async def _parsed(body: bytes) -> Any:
    """``jsontext.loads(body)``, parsed in steps (:func:`gateway.json_steps.loads_in_steps`,
    :data:`PARSE_STEP` bytes each) with the collector paused, yielding to the loop between."""
    steps = loads_in_steps(body, PARSE_STEP)
    while True:
        with _uncollected():
            try:
                next(steps)
            except StopIteration as done:
                return done.value
        await asyncio.sleep(0)


async def _sliced_frozen(body: bytes, model: type[_M], path: tuple[str, ...]) -> _M:
    data = await _parsed(body)
    holder = data
    for name in path[:-1]:
        holder = holder[name]
    if not isinstance(holder, dict) or not isinstance(holder.get(path[-1]), list):
        raise TypeError("no list of messages where the model keeps them")
    raw: list[Any] = holder[path[-1]]
    adapter = _adapter(model, path)
    validated: list[Any] = []
    for start in range(0, len(raw), SLICE):
        with _uncollected():
            piece = raw[start : start + SLICE]
            validated += adapter.validate_python(piece)
            # the parsed messages are freed a slice at a time: dropping 200k of them at once
            # (the list below) was one more section of ~35 ms
            raw[start : start + SLICE] = [None] * len(piece)
            del piece
        await asyncio.sleep(0)
    holder[path[-1]] = []
    result = model.model_validate(data)  # the envelope, checked with no messages
    target: Any = result
    for name in path[:-1]:
        target = getattr(target, name)
    target.__dict__[path[-1]] = validated  # already validated: no second pass over them
    return result


async def off_loop(size: int, fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)``, in a thread when ``size`` (messages) reaches :data:`LARGE_INPUT`.

    For pure-Python CPU work (id checks, request translation): a thread gives the loop the GIL
    back every switch interval (5 ms), so the loop keeps serving other streams.
    """
    if size < LARGE_INPUT:
        return fn(*args)
    return await asyncio.to_thread(fn, *args)
