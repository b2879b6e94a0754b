"""What of a run reached the client, across the upstream attempts of one run (issue 19 item 1).

:class:`SentLog` sits between the attempts (each one decoder's events) and the client. It
forwards every event as it comes (no content waits), and keeps what the retry rule needs:

* the seed design's safe step boundary: a failed attempt may be replaced by another only when
  no tool call is unfinished (started without its TOOL_CALL_RESULT) and nothing visible of the
  failed step was sent (text, reasoning, a tool call, any other content event after the last
  completed step) -- :attr:`SentLog.safe`;
* the completed steps, as AG-UI messages to append to the retried request
  (:meth:`SentLog.carried`): per step one assistant message (its text, its tool calls) and one
  tool message per result, so tools that ran are not run again;
* one run for the client: RUN_STARTED is sent at once (a client shows the run as started, as
  without retries); a later attempt's RUN_STARTED is dropped. STEP_STARTED is invisible, so it
  is held until the next visible event (which is not delayed: it is sent with it): a failed
  attempt's empty step is dropped with it. A later attempt's message or tool call id that the
  client already saw gets the suffix ``-<attempt>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ag_ui.core import (
    AssistantMessage,
    Event,
    EventType,
    FunctionCall,
    Message,
    ToolCall,
    ToolMessage,
)

__all__ = ["CLOSING", "INVISIBLE", "SentLog", "split_closing"]

INVISIBLE = frozenset({EventType.RUN_STARTED, EventType.STEP_STARTED, EventType.STEP_FINISHED})
"""Events with nothing a user sees: sending them does not make a retry visible."""

CLOSING = frozenset(
    {
        EventType.TEXT_MESSAGE_END,
        EventType.TOOL_CALL_END,
        EventType.REASONING_MESSAGE_END,
        EventType.REASONING_END,
        EventType.STEP_FINISHED,
    }
)
"""What a decoder's ``fail()`` emits before RUN_ERROR to close open parts."""

_ID_FIELDS = ("message_id", "tool_call_id", "parent_message_id")
_OPENERS = {
    EventType.TEXT_MESSAGE_START: "message_id",
    EventType.TOOL_CALL_START: "tool_call_id",
    EventType.REASONING_START: "message_id",
    EventType.REASONING_MESSAGE_START: "message_id",
    EventType.TOOL_CALL_RESULT: "message_id",
}
"""The id field each event introduces (renamed when an earlier attempt already sent it)."""


def split_closing(events: list[Event]) -> tuple[list[Event], list[Event]]:
    """``events`` (a failed attempt's last batch, RUN_ERROR removed) as (content, closing):
    the trailing run of :data:`CLOSING` events is what ``fail()`` added."""
    cut = len(events)
    while cut > 0 and events[cut - 1].type in CLOSING:
        cut -= 1
    return events[:cut], events[cut:]


class _Step:
    def __init__(self) -> None:
        self.text: dict[str, list[str]] = {}  # message id -> deltas
        self.calls: dict[str, list[str]] = {}  # tool call id -> [name, parent id, args...]
        self.results: list[ToolMessage] = []


class SentLog:
    """The client's view of a run made of several upstream attempts (module docstring)."""

    def __init__(self) -> None:
        self.attempt = 1
        self.started_sent = False
        self.dirty = False  # something visible of the current step was sent
        self._held: list[Event] = []
        self._open_calls: set[str] = set()
        self._ids: set[str] = set()  # ids the client saw
        self._earlier: set[str] = set()  # ids the client saw from earlier attempts
        self._renames: dict[str, str] = {}
        self._step = _Step()
        self._carried: list[Message] = []

    @property
    def safe(self) -> bool:
        """True while a failed attempt may be replaced: no unfinished tool call, nothing
        visible sent since the last completed step (or since the start)."""
        return not self.dirty and not self._open_calls

    @property
    def content_sent(self) -> bool:
        """True once a completed step was sent (a retry must carry it)."""
        return bool(self._carried)

    def carried(self) -> list[Message]:
        """The completed steps as messages for the retried request (oldest first)."""
        return list(self._carried)

    def next_attempt(self) -> None:
        """Forget the failed attempt's held events; later ids the client saw get renamed."""
        self.attempt += 1
        self._held = []
        self._renames = {}
        self._earlier = set(self._ids)

    def forward(self, events: Iterable[Event]) -> list[Event]:
        """The events to send now for ``events`` of the current attempt (in order)."""
        out: list[Event] = []
        for event in events:
            kind = event.type
            if kind == EventType.RUN_STARTED:
                if not self.started_sent:
                    self.started_sent = True
                    out.append(event)
                continue
            if kind == EventType.STEP_STARTED:
                self._held.append(event)
                continue
            if kind == EventType.STEP_FINISHED:
                name = getattr(event, "step_name", None)
                held = [
                    e
                    for e in self._held
                    if e.type == EventType.STEP_STARTED and getattr(e, "step_name", None) == name
                ]
                if held:  # the step was never sent: neither is its end
                    self._held.remove(held[-1])
                    continue
            if self._earlier:
                event = self._renamed(event)
            if self._held:
                out.extend(self._flush())
            self._note(event)
            out.append(event)
        return out

    def _flush(self) -> list[Event]:
        out, self._held = self._held, []
        return out

    def _renamed(self, event: Event) -> Event:
        if not self._earlier:
            return event
        introduced = _OPENERS.get(event.type)
        if introduced is not None:
            value = getattr(event, introduced, None)
            if isinstance(value, str) and value in self._earlier and value not in self._renames:
                self._renames[value] = f"{value}-{self.attempt}"
        update: dict[str, Any] = {}
        fields = type(event).model_fields
        for field in _ID_FIELDS:
            if field not in fields:
                continue
            value = getattr(event, field, None)
            if isinstance(value, str) and value in self._renames:
                update[field] = self._renames[value]
        return event.model_copy(update=update) if update else event

    def _note(self, event: Event) -> None:
        # hot path (every event of every run): attributes read only where the type has them
        kind = event.type
        step = self._step
        if kind == EventType.TEXT_MESSAGE_CONTENT:
            self.dirty = True
            message_id = getattr(event, "message_id", "")
            deltas = step.text.get(message_id)
            if deltas is None:
                deltas = step.text[message_id] = []
            deltas.append(getattr(event, "delta", ""))
            return
        introduced = _OPENERS.get(kind)
        if introduced is not None:
            self._ids.add(getattr(event, introduced, ""))
        if kind in INVISIBLE or kind in (EventType.RUN_FINISHED, EventType.RUN_ERROR):
            return
        if kind == EventType.TOOL_CALL_RESULT:
            call_id = getattr(event, "tool_call_id", "")
            self._open_calls.discard(call_id)
            content = getattr(event, "content", "")
            step.results.append(
                ToolMessage(
                    id=getattr(event, "message_id", f"result-{call_id}"),
                    tool_call_id=call_id,
                    content=content if isinstance(content, str) else str(content),
                )
            )
            if not self._open_calls:
                self._complete_step()
            return
        self.dirty = True
        if kind == EventType.TOOL_CALL_START:
            call_id = getattr(event, "tool_call_id", "")
            self._open_calls.add(call_id)
            parent = getattr(event, "parent_message_id", None) or ""
            step.calls[call_id] = [getattr(event, "tool_call_name", ""), parent]
        elif kind == EventType.TOOL_CALL_ARGS:
            call = step.calls.get(getattr(event, "tool_call_id", ""))
            if call is not None:
                call.append(getattr(event, "delta", ""))

    def _complete_step(self) -> None:
        step = self._step
        calls = [
            ToolCall(
                id=call_id,
                type="function",
                function=FunctionCall(name=parts[0], arguments="".join(parts[2:]) or "{}"),
            )
            for call_id, parts in step.calls.items()
        ]
        ids = [*step.text, *(parts[1] for parts in step.calls.values() if parts[1])]
        first_id = ids[0] if ids else f"step-{len(self._carried) + 1}"
        text = "".join("".join(deltas) for deltas in step.text.values())
        if calls or text:
            self._carried.append(
                AssistantMessage(id=first_id, content=text or None, tool_calls=calls or None)
            )
        self._carried.extend(step.results)
        self._step = _Step()
        self.dirty = False
