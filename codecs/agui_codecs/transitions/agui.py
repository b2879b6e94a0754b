"""Legal transitions of an AG-UI 1.0 run, as data, and the verifier that applies them.

Source: ``@ag-ui/client`` 1.0.0 ``src/verify/verify.ts``, ``docs/protocols.md`` §2.3.

* :data:`RUN_TABLE` maps ``(phase, event type)`` to the next :class:`Phase` or to a fault;
  ``"*"`` stands for any other type;
* :data:`LIFECYCLES` lists the bracketed entities (text message, tool call, reasoning span,
  reasoning message, step, subagent): the wire field naming the entity, its opener, its
  continuations and closers, and the faults for a wrong opener/continuation/close;
* :class:`AguiVerifier` applies both, plus the subagent ownership rules (``owners`` per entity
  kind, retained for the run) of the same file. State resets at each RUN_STARTED.

The verifier never raises on bad input: ``step`` returns the fault and then applies the event
the way the client would have, had it not stopped, so one defect is reported once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Literal

__all__ = [
    "AGUI_TERMINAL",
    "ANY",
    "LIFECYCLES",
    "LIFECYCLE_BY_EVENT",
    "RUN_TABLE",
    "AguiVerifier",
    "Fault",
    "Finding",
    "Lifecycle",
    "Phase",
    "Role",
]


class Fault(StrEnum):
    """What ``verifyEvents`` rejects; the value is the rule id suffix (``agui/verify/<value>``)."""

    FIRST_EVENT = "first-event-not-run-started"
    RUN_STARTED_WHILE_ACTIVE = "run-started-while-active"
    AFTER_FINISHED = "event-after-run-finished"
    AFTER_ERROR = "event-after-run-error"
    FINISHED_WHILE_OPEN = "run-finished-while-open"
    TEXT_START_OPEN = "text-start-already-open"
    TEXT_CONTENT_NOT_OPEN = "text-content-without-start"
    TEXT_END_NOT_OPEN = "text-end-without-start"
    TOOL_START_OPEN = "tool-start-already-open"
    TOOL_ARGS_NOT_OPEN = "tool-args-without-start"
    TOOL_END_NOT_OPEN = "tool-end-without-start"
    REASONING_START_OPEN = "reasoning-start-already-open"
    REASONING_END_NOT_OPEN = "reasoning-end-without-start"
    REASONING_MESSAGE_START_OPEN = "reasoning-message-start-already-open"
    REASONING_MESSAGE_CONTENT_NOT_OPEN = "reasoning-message-content-without-start"
    REASONING_MESSAGE_END_NOT_OPEN = "reasoning-message-end-without-start"
    STEP_ALREADY_ACTIVE = "step-already-active"
    STEP_NOT_STARTED = "step-finished-not-started"
    STEP_OTHER_OWNER = "step-finished-by-other-owner"
    SUBAGENT_FIELD = "subagent-field-invalid"
    SUBAGENT_ACTIVE = "subagent-already-active"
    SUBAGENT_REUSED = "subagent-id-reused"
    SUBAGENT_PARENT_UNKNOWN = "subagent-parent-unknown"
    SUBAGENT_NOT_ACTIVE = "subagent-not-active"
    OWNER_MISMATCH = "subagent-owner-mismatch"
    NULL_SUBAGENT_TAG = "null-subagent-run-id"


class Phase(StrEnum):
    """Run phase of the verifier: before the first run, inside one, or after its terminal event."""

    IDLE = "idle"
    ACTIVE = "active"
    FINISHED = "finished"
    ERRORED = "errored"


ANY: Final = "*"
AGUI_TERMINAL: Final = frozenset({"RUN_FINISHED", "RUN_ERROR"})

RUN_TABLE: Final[dict[tuple[Phase, str], Phase | Fault]] = {
    (Phase.IDLE, "RUN_STARTED"): Phase.ACTIVE,
    (Phase.IDLE, "RUN_ERROR"): Phase.ERRORED,
    (Phase.IDLE, ANY): Fault.FIRST_EVENT,
    (Phase.ACTIVE, "RUN_STARTED"): Fault.RUN_STARTED_WHILE_ACTIVE,
    (Phase.ACTIVE, "RUN_FINISHED"): Phase.FINISHED,
    (Phase.ACTIVE, "RUN_ERROR"): Phase.ERRORED,
    (Phase.ACTIVE, ANY): Phase.ACTIVE,
    (Phase.FINISHED, "RUN_STARTED"): Phase.ACTIVE,
    (Phase.FINISHED, "RUN_ERROR"): Phase.ERRORED,
    (Phase.FINISHED, ANY): Fault.AFTER_FINISHED,
    (Phase.ERRORED, "RUN_STARTED"): Phase.ACTIVE,
    (Phase.ERRORED, ANY): Fault.AFTER_ERROR,
}
"""Run-level transitions (verify.ts: first event, RUN_STARTED while active, after terminal)."""

Role = Literal["open", "continue", "close"]


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """One bracketed AG-UI entity kind.

    Attributes:
        kind: ``"text-message"``, ``"tool-call"``, ``"reasoning-span"``,
            ``"reasoning-message"``, ``"step"`` or ``"subagent"``.
        id_field: the wire field naming the entity (``messageId``, ``toolCallId``, ...).
        opener / continuers / closers: event types.
        owner: verify.ts ownership bucket (``message``, ``toolCall``, ``reasoning``) or None.
        faults: the fault for an opener of an open id, a continuation and a close of a closed
            one (None where verify.ts has no such check).
    """

    kind: str
    id_field: str
    opener: str
    continuers: frozenset[str]
    closers: frozenset[str]
    owner: str | None
    faults: tuple[Fault | None, Fault | None, Fault | None]


_F = Fault
# fmt: off
LIFECYCLES: Final[tuple[Lifecycle, ...]] = tuple(
    Lifecycle(kind, id_field, opener, frozenset(cont), frozenset(close), owner, faults)
    for kind, id_field, opener, cont, close, owner, faults in (
        ("text-message", "messageId", "TEXT_MESSAGE_START", ["TEXT_MESSAGE_CONTENT"],
         ["TEXT_MESSAGE_END"], "message",
         (_F.TEXT_START_OPEN, _F.TEXT_CONTENT_NOT_OPEN, _F.TEXT_END_NOT_OPEN)),
        ("tool-call", "toolCallId", "TOOL_CALL_START", ["TOOL_CALL_ARGS"], ["TOOL_CALL_END"],
         "toolCall", (_F.TOOL_START_OPEN, _F.TOOL_ARGS_NOT_OPEN, _F.TOOL_END_NOT_OPEN)),
        ("reasoning-message", "messageId", "REASONING_MESSAGE_START",
         ["REASONING_MESSAGE_CONTENT"], ["REASONING_MESSAGE_END"], "reasoning",
         (_F.REASONING_MESSAGE_START_OPEN, _F.REASONING_MESSAGE_CONTENT_NOT_OPEN,
          _F.REASONING_MESSAGE_END_NOT_OPEN)),
        ("reasoning-span", "messageId", "REASONING_START", [], ["REASONING_END"], "reasoning",
         (_F.REASONING_START_OPEN, None, _F.REASONING_END_NOT_OPEN)),
        ("step", "stepName", "STEP_STARTED", [], ["STEP_FINISHED"], None,
         (_F.STEP_ALREADY_ACTIVE, None, _F.STEP_NOT_STARTED)),
        ("subagent", "subagentRunId", "SUBAGENT_STARTED", [],
         ["SUBAGENT_FINISHED", "SUBAGENT_ERROR"], None,
         (_F.SUBAGENT_ACTIVE, None, _F.SUBAGENT_NOT_ACTIVE)),
    )
)
# fmt: on
"""The bracketed entities, in the order verify.ts reports them open at RUN_FINISHED
(steps first, then text, reasoning messages, reasoning spans, tool calls, subagents)."""

LIFECYCLE_BY_EVENT: Final[dict[str, tuple[Lifecycle, Role]]] = {
    **{lc.opener: (lc, "open") for lc in LIFECYCLES},
    **{t: (lc, "continue") for lc in LIFECYCLES for t in lc.continuers},
    **{t: (lc, "close") for lc in LIFECYCLES for t in lc.closers},
}
_FINISH_ORDER = (
    "step",
    "text-message",
    "reasoning-message",
    "reasoning-span",
    "tool-call",
    "subagent",
)


@dataclass(frozen=True, slots=True)
class Finding:
    """A fault found at one event: ``fault``, a one-line ``message`` and the ``ids`` involved."""

    fault: Fault
    message: str
    ids: tuple[str, ...] = ()


@dataclass(slots=True)
class _Owner:
    tag: str | None


class AguiVerifier:
    """Applies :data:`RUN_TABLE` and :data:`LIFECYCLES` to AG-UI wire events (dicts).

    Mirrors ``verifyEvents`` of ``@ag-ui/client`` 1.0.0, after chunk expansion (feed it
    START/CONTENT/END, not ``*_CHUNK``). ``step(event)`` returns the first :class:`Finding` or
    ``None`` and always updates the state (a rejected opener still opens, a rejected close
    still closes), so the next fault is reported on its own.

    Attributes:
        phase: the current :class:`Phase`.
        open: kind -> open ids (steps: ``"<owner>\\x00<name>"``).
        closed_subagents: subagent ids finished in this run.
    """

    def __init__(self) -> None:
        self.phase = Phase.IDLE
        self.open: dict[str, dict[str, None]] = {lc.kind: {} for lc in LIFECYCLES}
        self.owners: dict[str, dict[str, _Owner]] = {
            "message": {},
            "toolCall": {},
            "activity": {},
            "reasoning": {},
        }
        self.closed_subagents: set[str] = set()

    def _reset(self) -> None:
        for ids in self.open.values():
            ids.clear()
        for bucket in self.owners.values():
            bucket.clear()
        self.closed_subagents.clear()

    def _snapshot(self) -> tuple[Any, ...]:
        return (
            self.phase,
            {k: dict(v) for k, v in self.open.items()},
            {k: dict(v) for k, v in self.owners.items()},
            set(self.closed_subagents),
        )

    def _restore(self, saved: tuple[Any, ...]) -> None:
        self.phase, self.open, self.owners, self.closed_subagents = saved

    def open_ids(self, kind: str) -> list[str]:
        """The ids of ``kind`` open now, oldest first (steps as their names)."""
        ids = list(self.open[kind])
        return [i.split("\x00", 1)[1] for i in ids] if kind == "step" else ids

    def step(self, event: Mapping[str, Any], *, apply_faulty: bool = True) -> Finding | None:
        """Apply one event; return the fault verify.ts would raise, or ``None``.

        With ``apply_faulty=False`` an event that faults leaves the state untouched (a
        producer's guard drops it); by default it is applied as far as it goes (a checker
        reports the next fault on its own).
        """
        if not apply_faulty:
            if self.phase is Phase.ACTIVE:
                etype = event.get("type")
                if etype not in _MUTATING:
                    return self.step(event)  # reads the state only: nothing to restore
                lifecycle = _BRACKETED.get(etype) if type(etype) is str else None
                if lifecycle is not None:
                    return self._step_bracket(lifecycle, event)
            saved = self._snapshot()
            found = self.step(event)
            if found is not None:
                self._restore(saved)
            return found
        etype = str(event.get("type"))
        nxt = RUN_TABLE.get((self.phase, etype), RUN_TABLE[(self.phase, ANY)])
        first: Finding | None = None
        if isinstance(nxt, Fault):
            first = Finding(nxt, _RUN_MESSAGES[nxt].format(type=etype))
            if nxt is not Fault.FIRST_EVENT:
                return first  # the event is outside any run: nothing to apply
            nxt = Phase.ACTIVE  # recover: as if a run had started
        if etype == "RUN_STARTED" and self.phase in (Phase.FINISHED, Phase.ERRORED):
            self._reset()
        tag = event.get("subagentRunId", _ABSENT)
        if tag is None:
            self.phase = nxt
            return first or Finding(Fault.NULL_SUBAGENT_TAG, f"{etype} has subagentRunId null")
        found = self._entity(etype, event, None if tag is _ABSENT else str(tag))
        if etype == "RUN_FINISHED":
            found = found or self._finish_check()
        self.phase = nxt
        return first or found

    def _step_bracket(self, lc: Lifecycle, event: Mapping[str, Any]) -> Finding | None:
        """``step(event, apply_faulty=False)`` in an active run for an opener or closer of
        ``lc`` (not a subagent), undoing only what such a step changes instead of copying the
        whole state first (whose owners grow with every entity of the run and its history,
        and whose open ids with every message whose END a producer holds: a copy at each
        START and END made a run quadratic). A step changes the state only when it finds
        nothing; an opener or a closer of a text, tool call or reasoning item adds its id to
        the open ids and its owner, whatever it finds, or removes its open id, finding a fault
        only for a ``subagentRunId`` its owner does not have (then the open ids are copied
        first, to put that id back in its place). ``tests/codecs/test_verifier_undo.py``
        checks the findings and the state against a step undone from a full copy
        (hypothesis)."""
        if lc.owner is None:
            return self.step(event)
        kind = lc.kind
        opened = self.open[kind]
        owners = self.owners[lc.owner]
        eid = str(event.get(lc.id_field))
        was_open, had_owner = eid in opened, eid in owners
        saved = dict(opened) if was_open and "subagentRunId" in event else None
        found = self.step(event)
        if found is not None:  # (the phase stays active: _BRACKETED)
            if saved is not None:
                self.open[kind] = saved
            elif not was_open:
                opened.pop(eid, None)
            if not had_owner:
                owners.pop(eid, None)
        return found

    def _finish_check(self) -> Finding | None:
        for kind in _FINISH_ORDER:
            ids = self.open_ids(kind)
            if ids:
                return Finding(
                    Fault.FINISHED_WHILE_OPEN,
                    f"RUN_FINISHED while {kind}s are still open: {', '.join(ids)}",
                    tuple(ids),
                )
        return None

    def _owner_error(
        self, etype: str, tag: str | None, owner: _Owner | None, what: str, eid: str
    ) -> Finding | None:
        if tag is None or owner is None or owner.tag == tag:
            return None
        return Finding(
            Fault.OWNER_MISMATCH,
            f"{etype}: subagentRunId {tag!r} does not match the {what} {eid!r} opener's "
            f"{owner.tag or '(the parent agent)'!r}",
            (eid, tag),
        )

    def _entity(self, etype: str, ev: Mapping[str, Any], tag: str | None) -> Finding | None:
        if etype == "MESSAGES_SNAPSHOT":
            return self._seed(ev.get("messages"), authoritative=True)
        if etype == "RUN_STARTED":
            inp = ev.get("input")
            return self._seed(inp.get("messages") if isinstance(inp, dict) else None, False)
        if etype == "TOOL_CALL_RESULT":
            if isinstance(ev.get("messageId"), str):
                self.owners["message"][ev["messageId"]] = _Owner(tag)
            return None
        if etype == "ACTIVITY_SNAPSHOT":
            mid = str(ev.get("messageId"))
            if mid not in self.owners["activity"] or ev.get("replace") is not False:
                self.owners["activity"][mid] = _Owner(tag)
            return None
        if etype == "ACTIVITY_DELTA":
            mid = str(ev.get("messageId"))
            return self._owner_error(etype, tag, self.owners["activity"].get(mid), "activity", mid)
        if etype == "REASONING_ENCRYPTED_VALUE":
            eid, sub = str(ev.get("entityId")), ev.get("subtype")
            owners = self.owners
            owner = (
                owners["toolCall"].get(eid)
                if sub == "tool-call"
                else owners["message"].get(eid) or owners["reasoning"].get(eid)
                if sub == "message"
                else owners["reasoning"].get(eid)
            )
            return self._owner_error(etype, tag, owner, "entity", eid)
        entry = LIFECYCLE_BY_EVENT.get(etype)
        if entry is None:
            return None
        lc, role = entry
        if lc.kind == "step":
            return self._step(etype, ev, tag, role)
        if lc.kind == "subagent":
            return self._subagent(etype, ev, role)
        return self._bracket(lc, role, etype, ev, tag)

    def _bracket(
        self, lc: Lifecycle, role: Role, etype: str, ev: Mapping[str, Any], tag: str | None
    ) -> Finding | None:
        eid = str(ev.get(lc.id_field))
        opened = self.open[lc.kind]
        owners = self.owners[lc.owner or "message"]
        if role == "open":
            found = None
            if eid in opened:
                found = Finding(
                    lc.faults[0] or Fault.TEXT_START_OPEN,
                    f"{etype}: {lc.kind} {eid!r} is already open",
                    (eid,),
                )
            existing = owners.get(eid)
            inherited: _Owner | None = None
            if lc.kind == "tool-call":
                parent = ev.get("parentMessageId")
                p_owner = self.owners["message"].get(parent) if isinstance(parent, str) else None
                if p_owner is not None:
                    if tag is not None and tag != p_owner.tag:
                        found = found or self._owner_error(
                            etype, tag, p_owner, "parent message", str(parent)
                        )
                    inherited = p_owner
            if existing is not None:
                found = found or self._owner_error(etype, tag, existing, lc.kind, eid)
                if tag is None and inherited is not None and inherited.tag != existing.tag:
                    found = found or Finding(
                        Fault.OWNER_MISMATCH,
                        f"{etype}: {lc.kind} {eid!r} is owned by another agent than its parent "
                        "message",
                        (eid,),
                    )
            opened[eid] = None
            if existing is None:
                owners[eid] = _Owner(tag) if tag is not None else inherited or _Owner(None)
            return found
        if eid not in opened:
            fault = lc.faults[1] if role == "continue" else lc.faults[2]
            assert fault is not None
            return Finding(fault, f"{etype}: no open {lc.kind} with id {eid!r}", (eid,))
        found = self._owner_error(etype, tag, owners.get(eid), lc.kind, eid)
        if role == "close":
            del opened[eid]
        return found

    def _step(
        self, etype: str, ev: Mapping[str, Any], tag: str | None, role: Role
    ) -> Finding | None:
        name = str(ev.get("stepName"))
        key = ("" if tag is None else "@" + tag) + "\x00" + name
        steps = self.open["step"]
        if role == "open":
            if key in steps:
                return Finding(
                    Fault.STEP_ALREADY_ACTIVE, f"step {name!r} is already active", (name,)
                )
            steps[key] = None
            return None
        if key in steps:
            del steps[key]
            return None
        if any(k.split("\x00", 1)[1] == name for k in steps):
            return Finding(
                Fault.STEP_OTHER_OWNER,
                f"STEP_FINISHED for step {name!r} open under another owner",
                (name,),
            )
        return Finding(
            Fault.STEP_NOT_STARTED, f"STEP_FINISHED for step {name!r} that was not started", (name,)
        )

    def _subagent(self, etype: str, ev: Mapping[str, Any], role: Role) -> Finding | None:
        sid = ev.get("subagentRunId")
        optional = {
            "SUBAGENT_STARTED": (
                "description",
                "parentSubagentRunId",
                "parentToolCallId",
                "parentMessageId",
            ),
            "SUBAGENT_FINISHED": ("outcome",),
            "SUBAGENT_ERROR": ("code",),
        }[etype]
        nulls = [f for f in optional if f in ev and ev[f] is None]
        if nulls:
            return Finding(Fault.SUBAGENT_FIELD, f"{etype} has {nulls[0]}: null")
        if not isinstance(sid, str):
            return Finding(Fault.SUBAGENT_FIELD, f"{etype} without a subagentRunId")
        active = self.open["subagent"]
        if role == "open":
            if not isinstance(ev.get("name"), str):
                return Finding(Fault.SUBAGENT_FIELD, "SUBAGENT_STARTED without a name", (sid,))
            parent = ev.get("parentSubagentRunId")
            found = None
            if sid in active:
                found = Finding(
                    Fault.SUBAGENT_ACTIVE, f"subagent {sid!r} is already active", (sid,)
                )
            elif sid in self.closed_subagents:
                found = Finding(
                    Fault.SUBAGENT_REUSED, f"subagent id {sid!r} reused in this run", (sid,)
                )
            elif (
                parent is not None and parent not in active and parent not in self.closed_subagents
            ):
                found = Finding(
                    Fault.SUBAGENT_PARENT_UNKNOWN,
                    f"parentSubagentRunId {parent!r} was not started",
                    (sid,),
                )
            active[sid] = None
            return found
        if etype == "SUBAGENT_ERROR" and not isinstance(ev.get("message"), str):
            return Finding(Fault.SUBAGENT_FIELD, "SUBAGENT_ERROR without a message", (sid,))
        if sid not in active:
            return Finding(
                Fault.SUBAGENT_NOT_ACTIVE, f"{etype}: no active subagent {sid!r}", (sid,)
            )
        del active[sid]
        self.closed_subagents.add(sid)
        return None

    def _seed(self, messages: Any, authoritative: bool) -> Finding | None:
        if not isinstance(messages, list):
            return None
        for msg in messages:
            if not isinstance(msg, dict) or not isinstance(msg.get("id"), str):
                continue
            if "subagentRunId" in msg and msg["subagentRunId"] is None:
                return Finding(
                    Fault.NULL_SUBAGENT_TAG,
                    f"message {msg['id']!r} has subagentRunId null",
                    (msg["id"],),
                )
            tag = msg.get("subagentRunId")
            role = msg.get("role")
            bucket = self.owners[
                "reasoning"
                if role == "reasoning"
                else "activity"
                if role == "activity"
                else "message"
            ]
            if authoritative or msg["id"] not in bucket:
                bucket[msg["id"]] = _Owner(tag)
            for call in msg.get("toolCalls") or []:
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    if authoritative or call["id"] not in self.owners["toolCall"]:
                        self.owners["toolCall"][call["id"]] = _Owner(tag)
        return None


_ABSENT: Final = object()
_MUTATING: Final = frozenset(
    {lc.opener for lc in LIFECYCLES}
    | {t for lc in LIFECYCLES for t in lc.closers}
    | {"RUN_STARTED", "MESSAGES_SNAPSHOT", "TOOL_CALL_RESULT", "ACTIVITY_SNAPSHOT"}
    | AGUI_TERMINAL
)
"""Event types whose step may change the state of an active run (the others only read it)."""
_BRACKETED: Final[dict[str, Lifecycle]] = {
    etype: lc
    for etype, (lc, role) in LIFECYCLE_BY_EVENT.items()
    if role != "continue"
    and lc.kind != "subagent"
    and RUN_TABLE.get((Phase.ACTIVE, etype), RUN_TABLE[(Phase.ACTIVE, ANY)]) is Phase.ACTIVE
}
"""Openers and closers whose step in an active run changes only their kind's open ids and
the owner of their id, and keeps the phase (:meth:`AguiVerifier._step_bracket`)."""
_RUN_MESSAGES: Final[dict[Fault, str]] = {
    Fault.FIRST_EVENT: "first event is {type}, not RUN_STARTED",
    Fault.RUN_STARTED_WHILE_ACTIVE: "RUN_STARTED while a run is still active",
    Fault.AFTER_FINISHED: "{type} after RUN_FINISHED (start a new run with RUN_STARTED)",
    Fault.AFTER_ERROR: "{type} after RUN_ERROR (the run has already errored)",
}
