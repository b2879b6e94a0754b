"""Cleaning one AG-UI upstream event against ``ag_ui.core`` (the first step of
:class:`~agui_codecs.protocols.agui._normalizer.AguiNormalizer`).

Unknown events and fields, snake_case names, nulls for optional fields, THINKING_* (removed in
AG-UI 1.0), reshaped TOOL_CALL_RESULT / RUN_ERROR, union members with an unknown tag (as
``@ag-ui/client`` 1.0.0 ``src/enforce/strip.ts`` removes): each cleaned and counted under the
repair keys of :mod:`agui_codecs.protocols.agui.decoder`.
"""

from __future__ import annotations

import typing
from collections import Counter
from typing import Any

import orjson
from ag_ui.core import Event
from pydantic import BaseModel, ValidationError

from ...errors import MalformedUpstreamError
from ...events import event_json, event_to_wire, parse_event

__all__ = ["AguiCleaner"]

Wire = dict[str, Any]

_MODELS: dict[str, type[BaseModel]] = {
    str(m.model_fields["type"].default.value): m for m in typing.get_args(typing.get_args(Event)[0])
}
_THINKING = {
    "THINKING_START": "REASONING_START",
    "THINKING_END": "REASONING_END",
    "THINKING_TEXT_MESSAGE_START": "REASONING_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT": "REASONING_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END": "REASONING_MESSAGE_END",
}


def _fields(model: type[BaseModel]) -> dict[str, tuple[str, bool]]:
    """wire name -> (wire name, optional); python names map to the wire name too."""
    out: dict[str, tuple[str, bool]] = {}
    for name, info in model.model_fields.items():
        wire = info.alias or name
        entry = (wire, not info.is_required() and info.default is None)
        out[wire] = out[name] = entry
    return out


_FIELDS = {t: _fields(m) for t, m in _MODELS.items()}
_CANONICAL: dict[str, frozenset[str]] = {
    t: frozenset(key for key, (wire, _) in fields.items() if key == wire)
    for t, fields in _FIELDS.items()
}
"""Event type -> the keys :meth:`AguiCleaner._clean` keeps as they are (wire names)."""


def _without(
    event: Wire, loc: tuple[Any, ...], fields: dict[str, tuple[str, bool]], error: str
) -> Wire | None:
    """``event`` minus the part a validation error points at, or None when nothing may go.

    An unknown union tag removes the nearest enclosing list element (or optional field);
    any other error removes only an optional top-level field.
    """
    if not loc or not isinstance(loc[0], str) or loc[0] not in event:
        return None
    if error == "union_tag_invalid":
        path: list[Any] = []
        node: Any = event
        cut: list[Any] | None = None
        for step in loc:
            if isinstance(node, list) and isinstance(step, int) and step < len(node):
                cut = [*path, step]
            elif not isinstance(node, dict) or step not in node:
                if isinstance(step, str):
                    continue  # a union branch label pydantic puts in the path
                break
            path.append(step)
            node = node[step]
        if cut is not None:
            copy = orjson.loads(orjson.dumps(event))
            parent = copy
            for step in cut[:-1]:
                parent = parent[step]
            del parent[cut[-1]]
            return dict(copy)
    name = str(loc[0])
    if (
        len(loc) >= 1
        and fields.get(name, ("", False))[1]
        and (len(loc) == 1 or error == "union_tag_invalid")
    ):
        return {k: v for k, v in event.items() if k != name}
    return None


class AguiCleaner:
    """One upstream dict in, one valid AG-UI wire dict (or None, dropped and counted) out.

    A base of :class:`~agui_codecs.protocols.agui._normalizer.AguiNormalizer`, which sets the
    attributes below and mints ids.

    Raises (from :meth:`_clean`):
        MalformedUpstreamError: not an object with a string type, or known fields malformed
            beyond repair.
    """

    thread_id: str | None
    run_id: str | None
    repairs: Counter[str]
    _thinking: dict[str, str | None]

    def _mint(self, what: str) -> str:
        raise NotImplementedError

    # -- cleaning: one upstream dict -> one valid wire dict (or None) ---------------------------
    def _clean(self, raw: Any) -> Wire | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise MalformedUpstreamError("AG-UI event is not a JSON object with a string type")
        etype = raw["type"]
        if etype in _THINKING:
            self.repairs["thinking-converted"] += 1
            raw = self._from_thinking(raw)
            etype = raw["type"]
        fields = _FIELDS.get(etype)
        if fields is None:
            self.repairs["unknown-event-dropped"] += 1
            return None
        if raw.keys() <= _CANONICAL[etype] and None not in raw.values():
            event: Wire = dict(raw)  # what the loop below gives when it repairs nothing
        else:
            event = self._cleaned_fields(raw, fields)
        return self._reshaped(raw, etype, event)

    def _cleaned_fields(self, raw: Wire, fields: dict[str, tuple[str, bool]]) -> Wire:
        """``raw``'s known fields under their wire names, optional nulls dropped (counted)."""
        event: Wire = {}
        for key, value in raw.items():
            if key not in fields:
                self.repairs["unknown-field-dropped"] += 1
                continue
            wire, optional = fields[key]
            if wire != key:
                self.repairs["snake-case-field"] += 1
            if value is None and optional:
                self.repairs["null-field-dropped"] += 1
                continue
            event[wire] = value
        return event

    def _reshaped(self, raw: Wire, etype: str, event: Wire) -> Wire | None:
        """``event`` with the per-type repairs (results, run ids, errors) made, validated."""
        if etype == "TOOL_CALL_RESULT":
            self._reshape_result(raw, event)
        elif etype in ("RUN_STARTED", "RUN_FINISHED"):
            for key, mine in (("threadId", self.thread_id), ("runId", self.run_id)):
                if not isinstance(event.get(key), str):
                    self.repairs["run-id-mismatch"] += 1
                    event[key] = mine or ("thread_agui" if key == "threadId" else "run_agui")
        elif etype == "RUN_ERROR" and not isinstance(event.get("message"), str):
            error = raw.get("error")
            text = error.get("message") if isinstance(error, dict) else error
            event["message"] = str(text) if text else "upstream run error"
            self.repairs["run-error-reshaped"] += 1
        if etype == "RUN_ERROR" and not event.get("code"):
            # AG-UI makes code optional; the gateway promises every RUN_ERROR carries one.
            event["code"] = "UPSTREAM_ERROR"
            self.repairs["run-error-code-added"] += 1
        return self._validated(event)

    def _validated(self, event: Wire) -> Wire:
        """Validate with ``ag_ui.core``; a union member with an unknown tag (as ``strip.ts`` of
        the TS client removes) or a malformed optional top-level field is dropped and counted
        (``invalid-part-dropped``); anything else is malformed."""
        for _ in range(64):
            try:
                parsed = parse_event(event)
            except ValidationError as exc:
                errors = exc.errors()
                first = next((e for e in errors if e["type"] == "union_tag_invalid"), errors[0])
                loc = first["loc"][1:]
                trimmed = _without(event, loc, _fields(_MODELS[event["type"]]), first["type"])
                if trimmed is None:
                    where = ".".join(map(str, loc)) or event["type"]
                    raise MalformedUpstreamError(
                        f"{event['type']}: {where}: {first['msg']}"
                    ) from exc
                event = trimmed
                self.repairs["invalid-part-dropped"] += 1
                continue
            if self.reuse_validated:
                try:  # its JSON now: whatever happens to the dict later, this is what it was
                    json = event_json(parsed)
                except orjson.JSONEncodeError:
                    self._last_valid = None
                else:  # the wire dict read back from it (event_to_wire(parsed), one dumps less)
                    self._last_valid = (json, parsed)
                    return orjson.loads(json)  # type: ignore[no-any-return]
            return event_to_wire(parsed)
        raise MalformedUpstreamError(f"{event['type']}: too many invalid parts")

    reuse_validated: bool = True
    """Let :meth:`event_of` give back the event :meth:`_validated` built (the same event)."""
    _last_valid: tuple[bytes, Event] | None = None

    def event_of(self, wire: Wire) -> Event:
        """``parse_event(wire)`` for a wire event the normalizer emits: the ``ag_ui.core``
        event validated last, once, when ``wire`` is that event's wire form unchanged (its JSON
        the same bytes: most events pass the sequencing as they came), instead of validating
        the same fields a second time (about 3 us an event). A wire the sequencing made or
        changed (a minted id, metadata, a synthesized END) is validated as it is.
        ``tests/codecs/test_agui_decoder_fast_path.py`` checks the decoder's events are the
        same either way (hypothesis).

        Raises:
            pydantic.ValidationError: ``wire`` is not a valid AG-UI event (as ``parse_event``).
        """
        last = self._last_valid
        if last is not None:
            try:
                same = orjson.dumps(wire) == last[0]
            except orjson.JSONEncodeError:
                same = False
            if same:  # the same JSON is the same event; given out once
                self._last_valid = None
                return last[1]
        return parse_event(wire)

    def _reshape_result(self, raw: Wire, event: Wire) -> None:
        changed = False
        if "content" not in event and "result" in raw:
            event["content"] = raw["result"]
            changed = True
        if "content" in event and not isinstance(event["content"], str | list):
            event["content"] = orjson.dumps(event["content"]).decode()
            changed = True
        if "messageId" not in event and isinstance(event.get("toolCallId"), str):
            event["messageId"] = f"{event['toolCallId']}-result"
            changed = True
        if changed:
            self.repairs["tool-result-reshaped"] += 1

    def _from_thinking(self, raw: Wire) -> Wire:
        etype, state = raw["type"], self._thinking
        event = {k: v for k, v in raw.items() if k not in ("title",)}
        event["type"] = _THINKING[etype]
        if etype == "THINKING_START":
            state["span"] = event["messageId"] = self._mint("reasoning")
        elif etype == "THINKING_TEXT_MESSAGE_START":
            state["message"] = event["messageId"] = state["span"] or self._mint("reasoning")
            event["role"] = "reasoning"
        elif etype == "THINKING_TEXT_MESSAGE_CONTENT":
            event["messageId"] = state["message"] or self._mint("reasoning")
        elif etype == "THINKING_TEXT_MESSAGE_END":
            event["messageId"], state["message"] = state["message"] or self._mint("reasoning"), None
        else:
            event["messageId"], state["span"] = state["span"] or self._mint("reasoning"), None
        return event
