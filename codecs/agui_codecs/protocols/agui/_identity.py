"""Identity (issue 11 kind 1, :mod:`agui_codecs.identity`) behind the ``agui`` decoder: the
AG-UI id of every entity an AG-UI runtime opens, and what later events naming its upstream id
refer to (a base of :class:`~agui_codecs.protocols.agui._normalizer.AguiNormalizer`).

Entities: text messages, reasoning messages and spans, tool calls, TOOL_CALL_RESULT messages,
activities (ACTIVITY_SNAPSHOT / ACTIVITY_DELTA ``messageId``); MESSAGES_SNAPSHOT re-lists them
(AG-UI 1.0 "MessagesSnapshot": the same entities, which ``@ag-ui/client`` 1.0.0
``defaultApplyEvents`` replaces by id, dropping the ones not listed).
"""

from __future__ import annotations

from typing import Any

from ._holds import AguiHolds, Wire

__all__ = ["AguiIdentity"]

_MESSAGE_KINDS = ("reasoning-message", "text-message")  # what REASONING_ENCRYPTED_VALUE names
_SNAPSHOT_KIND = {  # MESSAGES_SNAPSHOT message role -> the kind of entity its id names
    "assistant": "assistant",
    "reasoning": "reasoning-message",
    "tool": "result",
    "activity": "activity",
}


_SNAPSHOT_LOOKUP = {  # kinds whose entities a snapshot id of this kind names, in order
    "assistant": ("text-message", "tool-call"),
    "assistant-calls": ("tool-call", "text-message"),
    "tool-ref": ("tool-call",),
}


def _snapshot_fields(message: dict[str, Any]) -> list[tuple[str, str, dict[str, Any] | None]]:
    """``(kind, key, holder)`` of each id of a snapshot message: its ``id`` (by role), an
    assistant message's ``toolCalls[].id`` (holder: the call), a tool message's
    ``toolCallId`` (kind ``tool-ref``); holder None: the message itself."""
    out: list[tuple[str, str, dict[str, Any] | None]] = []
    kind = _SNAPSHOT_KIND.get(str(message.get("role")))
    if kind == "assistant" and message.get("toolCalls") and not message.get("content"):
        kind = "assistant-calls"  # a message of calls only: named after its first call
    if kind is not None and isinstance(message.get("id"), str):
        out.append((kind, "id", None))
    calls = message.get("toolCalls")
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                out.append(("tool-call", "id", call))
    if kind == "result" and isinstance(message.get("toolCallId"), str):
        out.append(("tool-ref", "toolCallId", None))
    return out


def _snapshot_refs(message: Any) -> list[tuple[str, str]]:
    if not isinstance(message, dict):
        return []
    return [
        (kind, (message if holder is None else holder)[key])
        for kind, key, holder in _snapshot_fields(message)
    ]


class AguiIdentity(AguiHolds):
    """The identity rules of a normalized run (module docstring)."""

    # -- identity (issue 11 kind 1, agui_codecs.identity) ----------------------------------------
    def _entity_id(self, kind: str, up: str) -> str:
        """The AG-UI id of a new entity of ``kind`` (``text-message``, ``reasoning-message``,
        ``tool-call``) whose upstream id is ``up``: ``up`` itself, unless an entity of the
        thread (reserved history, or one this run opened, of any kind) has it, then
        :meth:`Identities.peek <agui_codecs.identity.Identities.peek>`'s derived id
        (``id-derived``). Later events naming ``up`` for ``kind`` go to this entity."""
        span = self._alias.get(("reasoning-span", up))
        if (
            kind == "reasoning-message"
            and span is not None
            and span in self.verifier.open["reasoning-span"]
            and span not in self._span_messages
        ):
            eid = span  # the message of the span with its id: one reasoning entity
            self._span_messages.add(span)
        else:
            eid = self.ids.peek(up)
            if eid != up:
                self.repairs["id-derived"] += 1
        self._note(kind, up, eid)
        return eid

    def _note(self, kind: str, up: str, eid: str) -> None:
        """Record a new entity of ``kind`` with upstream id ``up`` and output id ``eid``."""
        self._alias[(kind, up)] = eid
        self._entities.setdefault((kind, up), []).append(eid)
        self._upstreams.add(up)

    def _other_kind(self, up: str) -> bool:
        """Whether this run has an entity with upstream or output id ``up`` (any kind)."""
        return up in self._upstreams or up in self._used

    def _activity(self, ev: Wire) -> Wire:
        """ACTIVITY_SNAPSHOT / ACTIVITY_DELTA ``messageId``: the activity this run opened with
        that upstream id, or the history's activity message with it (a snapshot of it updates
        it: ``@ag-ui/client`` 1.0.0 replaces the activity message with that id), else, for a
        snapshot, a new activity, derived (``id-derived``) when the thread holds the id for
        another entity (the client would replace that message with the activity)."""
        up = ev["messageId"]
        eid = self._alias.get(("activity", up))
        if eid is None:
            if ev["type"] == "ACTIVITY_DELTA":
                return ev
            if up in self.history_activities and not self._other_kind(up):
                eid = up
            else:
                eid = self.ids.peek(up)
                if eid != up:
                    self.repairs["id-derived"] += 1
            self._note("activity", up, eid)
        return ev if eid == up else {**ev, "messageId": eid}

    def _snapshot(self, ev: Wire) -> Wire:
        """MESSAGES_SNAPSHOT with the output ids of this run's entities: a snapshot re-lists
        the thread's messages (the same entities, AG-UI 1.0 "MessagesSnapshot"; the client
        replaces each message by id and drops the ones not listed), so a message, tool call
        or tool result naming an upstream id this run gave to entities of its kind names
        them (the n-th listing of an id the n-th of the latest, so none is dropped); one
        naming an id this run used for another kind is a second entity and gets a derived
        id (``id-derived``); others (the history's, new ones) are kept."""
        messages = ev.get("messages")
        if not isinstance(messages, list):
            return ev
        wanted: dict[tuple[str, str], int] = {}
        for message in messages:
            for key in _snapshot_refs(message):
                wanted[key] = wanted.get(key, 0) + 1
        seen: dict[tuple[str, str], int] = {}
        out = [self._snapshot_message(m, wanted, seen) for m in messages]
        if all(a is b for a, b in zip(out, messages, strict=True)):
            return ev
        return {**ev, "messages": out}

    def _snapshot_message(
        self, message: Any, wanted: dict[tuple[str, str], int], seen: dict[tuple[str, str], int]
    ) -> Any:
        if not isinstance(message, dict):
            return message
        update: dict[str, Any] = {}
        for kind, key, holder in _snapshot_fields(message):
            if holder is None:
                new = self._snapshot_id(kind, message[key], wanted, seen)
                if new != message[key]:
                    update[key] = new
        calls = message.get("toolCalls")
        if isinstance(calls, list):
            fixed = [
                {**c, "id": new}
                if isinstance(c, dict)
                and isinstance(c.get("id"), str)
                and (new := self._snapshot_id("tool-call", c["id"], wanted, seen)) != c["id"]
                else c
                for c in calls
            ]
            if any(a is not b for a, b in zip(fixed, calls, strict=True)):
                update["toolCalls"] = fixed
        return {**message, **update} if update else message

    def _snapshot_id(
        self,
        kind: str,
        up: str,
        wanted: dict[tuple[str, str], int],
        seen: dict[tuple[str, str], int],
    ) -> str:
        """The output id a snapshot's ``kind`` id ``up`` names (:meth:`_snapshot`)."""
        history = self.history_ids.get(up, [])
        entities = history
        for each in _SNAPSHOT_LOOKUP.get(kind, (kind,)):
            if self._entities.get((each, up)):
                entities = history + self._entities[(each, up)]
                break
        if entities:  # the thread's entities with this upstream id, oldest first
            key = (kind, up)
            n = seen.get(key, 0)
            seen[key] = n + 1
            skip = max(0, len(entities) - wanted.get(key, 1))
            return entities[min(skip + n, len(entities) - 1)]
        if kind == "tool-ref" or not self._other_kind(up):
            return up  # a reference, or an id of the history or a new one: kept
        eid = self.ids.mint(up)  # a second entity with an id this run used for another kind
        if eid != up:
            self.repairs["id-derived"] += 1
        self._note("text-message" if kind.startswith("assistant") else kind, up, eid)
        return eid

    def _references(self, ev: Wire) -> Wire:
        """A TOOL_CALL_RESULT naming the latest call with its ``toolCallId`` and carrying a
        ``messageId`` unique in the thread (derived when taken); a REASONING_ENCRYPTED_VALUE
        naming the latest entity with its ``entityId``."""
        if ev["type"] == "TOOL_CALL_RESULT":
            cid, mid = ev["toolCallId"], ev["messageId"]
            ev = {**ev, "toolCallId": self._alias.get(("tool-call", cid), cid)}
            ev["messageId"] = self.ids.mint(mid)  # committed now: the result may be held
            if ev["messageId"] != mid:
                self.repairs["id-derived"] += 1
            self._note("result", mid, ev["messageId"])
            return ev
        entity = ev.get("entityId")
        if not isinstance(entity, str):
            return ev
        kinds = ("tool-call",) if ev.get("subtype") == "tool-call" else _MESSAGE_KINDS
        for kind in kinds:
            if (kind, entity) in self._alias:
                return {**ev, "entityId": self._alias[(kind, entity)]}
        return ev
