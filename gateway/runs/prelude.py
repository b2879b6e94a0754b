"""The AG-UI ``?replay=snapshot`` prelude: a valid prefix for a client that re-joins mid-run.

``docs/runs.md`` §5 (replays for clients that cannot resume) and ``docs/protocols.md`` §2.6:
the prelude is RUN_STARTED, a MESSAGES_SNAPSHOT of what is complete, START events re-opening
what is still open *carrying what it accumulated*, then the live tail continues strictly after
the prelude's cursor. So every tool argument reaches the client exactly once: a closed call's
arguments in the snapshot, an open call's accumulated arguments in one TOOL_CALL_ARGS of the
prelude, later fragments in the tail. A REASONING_ENCRYPTED_VALUE stored before the cut is
kept the same way: a closed reasoning message or tool call carries it in the snapshot
(``encryptedValue``, AG-UI 1.0 ``ReasoningMessage`` / ``ToolCall``), an open one gets it
again as a REASONING_ENCRYPTED_VALUE right after its re-opening events (``@ag-ui/client``
1.0.0 ``src/apply/default.ts`` sets the value on the message, or on the call of an assistant
message, with that id).

``@ag-ui/client`` 1.0 MESSAGES_SNAPSHOT replaces the client's message list (messages absent
from the snapshot are dropped, ``src/apply/default.ts``), so the snapshot carries the prior
conversation too (``prior_messages``, AG-UI wire messages, e.g. from
:func:`gateway.runs.history.history_items_to_agui`), followed by this run's messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agui_codecs.core import RunFold

from ..store.cursor import Cursor
from ..store.models import JsonObject, RunEvent
from .history import agui_messages_from_parts

__all__ = ["Prelude", "build_snapshot_prelude"]


@dataclass(frozen=True, slots=True)
class Prelude:
    """A snapshot prelude.

    Attributes:
        events: AG-UI wire events to send first (without ``id:`` lines, except that the HTTP
            layer may put ``cursor`` on the last one: the client then holds everything up to it).
        cursor: the tail continues strictly after this cursor (None: nothing was stored yet,
            tail from the start).
        ended: the prelude already holds the run's terminal event (send it and close).
    """

    events: list[JsonObject] = field(default_factory=list)
    cursor: Cursor | None = None
    ended: bool = False


def _encrypted(subtype: str, entity_id: str, value: str | None) -> list[JsonObject]:
    if value is None:
        return []
    return [
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": subtype,
            "entityId": entity_id,
            "encryptedValue": value,
        }
    ]


def _reopen(fold: RunFold) -> list[tuple[int, list[JsonObject]]]:
    groups: list[tuple[int, list[JsonObject]]] = []
    chunk: list[tuple[int, list[JsonObject]]] = []  # at most one: it must come last
    for name, order in fold.open_steps.items():
        groups.append((order, [{"type": "STEP_STARTED", "stepName": name}]))
    for span, order in fold.reasoning_spans.items():
        groups.append((order, [{"type": "REASONING_START", "messageId": span}]))
    for r in fold.reasoning_messages.values():
        text = "".join(r.content)
        value = _encrypted("message", r.message_id, r.encrypted_value)
        if r.chunk:  # the client passes the value through without closing the chunk stream
            opened = {"type": "REASONING_MESSAGE_CHUNK", "messageId": r.message_id, "delta": text}
            chunk.append((r.order, [opened, *value]))
            continue
        events: list[JsonObject] = [
            {"type": "REASONING_MESSAGE_START", "messageId": r.message_id, "role": "reasoning"}
        ]
        if text:
            events.append(
                {"type": "REASONING_MESSAGE_CONTENT", "messageId": r.message_id, "delta": text}
            )
        groups.append((r.order, events + value))
    for t in fold.open_text.values():
        text = "".join(t.content)
        start: JsonObject = {"messageId": t.message_id, "role": t.role}
        if t.name is not None:
            start["name"] = t.name
        if t.chunk:
            chunk.append((t.order, [{"type": "TEXT_MESSAGE_CHUNK", **start, "delta": text}]))
            continue
        events = [{"type": "TEXT_MESSAGE_START", **start}]
        if text:
            events.append(
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": t.message_id, "delta": text}
            )
        groups.append((t.order, events))
    for c in fold.open_tools.values():
        args = "".join(c.args)
        call: JsonObject = {"toolCallId": c.tool_call_id, "toolCallName": c.name}
        if c.parent_message_id is not None:
            call["parentMessageId"] = c.parent_message_id
        value = _encrypted("tool-call", c.tool_call_id, c.encrypted_value)
        if c.chunk:
            chunk.append((c.order, [{"type": "TOOL_CALL_CHUNK", **call, "delta": args}, *value]))
            continue
        if c.metadata is not None:
            call["metadata"] = c.metadata
        events = [{"type": "TOOL_CALL_START", **call}]
        if args:
            events.append({"type": "TOOL_CALL_ARGS", "toolCallId": c.tool_call_id, "delta": args})
        groups.append((c.order, events + value))
    groups.sort(key=lambda g: g[0])
    return groups + chunk


def build_snapshot_prelude(
    events: Iterable[RunEvent], *, prior_messages: Sequence[JsonObject] = ()
) -> Prelude:
    """Build the prelude from a run's durable events (in order, from the first one).

    Args:
        events: the run's stored events up to some cursor (e.g. everything durable now).
        prior_messages: AG-UI wire messages of the conversation before this run; a message
            with the id of one of the run's own messages is replaced by the run's version.

    Returns:
        The prelude; the caller then streams the run's events strictly after
        :attr:`Prelude.cursor`.
    """
    fold = RunFold()
    last: Cursor | None = None
    for stored in events:
        fold.apply(stored.event)
        last = stored.cursor
    if last is None:
        return Prelude()
    if fold.run_started is None:  # closed before it started: only RUN_ERROR is stored
        return Prelude([fold.terminal] if fold.terminal else [], last, fold.ended)
    own = agui_messages_from_parts(
        fold.parts,
        skip_text=fold.open_text,
        skip_reasoning=fold.reasoning_messages,
        skip_tools=fold.open_tools,
    )
    own_ids = {m["id"] for m in own}
    snapshot = [m for m in prior_messages if m.get("id") not in own_ids] + own
    out: list[JsonObject] = [fold.run_started, {"type": "MESSAGES_SNAPSHOT", "messages": snapshot}]
    out += fold.state_events
    out += fold.activity_events
    for _order, group in _reopen(fold):
        out += group
    if fold.terminal is not None:
        out.append(fold.terminal)
    return Prelude(out, last, fold.ended)
